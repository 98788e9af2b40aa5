/* The kernel sources compiled into the library (generated at build time from
 * the cl directory by cmake/embed_kernels.cmake). */
#ifndef CLMG_CORE_EMBEDDED_H
#define CLMG_CORE_EMBEDDED_H

#include <stddef.h>

typedef struct clmg_embedded_source {
  const char *family; /* file name without .cl */
  const unsigned char *text;
  size_t size;
} clmg_embedded_source;

/* Terminated by an entry whose family is NULL. */
extern const clmg_embedded_source clmg_embedded_sources[];

#endif
