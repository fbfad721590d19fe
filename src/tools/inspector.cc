#include "tools/inspector.h"
