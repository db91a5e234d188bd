#ifndef TOLLGATE_CHIREDIS_SHIM_H
#define TOLLGATE_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
