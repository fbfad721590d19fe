#include "tools/pytorch_converter.h"
