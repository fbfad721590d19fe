#include "tools/jsonizer.h"
