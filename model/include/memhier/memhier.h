#pragma once
// memhier public API: load an architecture, compute occupancy, open traces. Later layers (simulation, timing) add here.
#include "memhier/arch.h"
#include "memhier/arch_loader.h"
#include "memhier/arch_schema.h"
#include "memhier/error.h"
#include "memhier/occupancy.h"
#include "memhier/report.h"
#include "memhier/trace.h"
#include "memhier/trace_io.h"
#include "memhier/units.h"
#include "memhier/version.h"
