#pragma once
// memhier public API: load an architecture, compute occupancy. Later layers (traces, simulation, timing) add here.
#include "memhier/arch.h"
#include "memhier/arch_loader.h"
#include "memhier/arch_schema.h"
#include "memhier/error.h"
#include "memhier/occupancy.h"
#include "memhier/report.h"
#include "memhier/units.h"
#include "memhier/version.h"
