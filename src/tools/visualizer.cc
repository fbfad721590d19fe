#include "tools/visualizer.h"
