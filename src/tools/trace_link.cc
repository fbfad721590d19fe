#include "tools/trace_link.h"
