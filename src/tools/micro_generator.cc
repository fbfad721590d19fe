#include "tools/micro_generator.h"
