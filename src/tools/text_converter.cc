#include "tools/text_converter.h"
