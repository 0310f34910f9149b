/**
 * @file shapegate.h
 * @brief All of shapegate's public API: include this, link libshapegate
 *        (`pkg-config --cflags --libs shapegate`).
 *
 *     common.h   version, sg_free, exact integers (sg_num)
 *     error.h    status codes and the error record
 *     expr.h     the guard expression language
 *     trace.h    traces: loading, immutable, structured copies and spec edits
 *     engine.h   the engine: check, spec, verify; options, counters
 *     cancel.h   cancel tokens
 *     report.h   reports: accessors, the JSON and text writers
 *     archive.h  .pt2 archives
 *     graph.h    the exported program inside an archive
 */
#ifndef SHAPEGATE_SHAPEGATE_H
#define SHAPEGATE_SHAPEGATE_H

#include "shapegate/archive.h"
#include "shapegate/cancel.h"
#include "shapegate/common.h"
#include "shapegate/engine.h"
#include "shapegate/error.h"
#include "shapegate/expr.h"
#include "shapegate/graph.h"
#include "shapegate/report.h"
#include "shapegate/trace.h"

#endif
