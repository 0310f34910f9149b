/**
 * @file export.h
 * @brief SG_API: what libshapegate.so exports. The library is built with
 *        hidden visibility (-fvisibility=hidden); the declarations of the
 *        public headers carry SG_API and are the only symbols it exports.
 */
#ifndef SHAPEGATE_EXPORT_H
#define SHAPEGATE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SG_API __attribute__((visibility("default")))
#else
#define SG_API
#endif

#endif
