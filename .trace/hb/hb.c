#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <openssl/evp.h>
#ifdef INL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>
#ifndef XXH_VECTOR
#define XXH_VECTOR -1
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  size_t n=(argc>1?atoi(argv[1]):64)<<20; unsigned char*b=malloc(n),*c=malloc(n);
  for(size_t i=0;i<n;i++)b[i]=rand();
  double t=now(); memcpy(c,b,n); double tm=now()-t;
  t=now(); volatile int r=memcmp(c,b,n); double tc=now()-t; (void)r;
  t=now(); XXH128_hash_t h=XXH3_128bits(b,n); double tx=now()-t;
  t=now(); XXH64_hash_t h6=XXH3_64bits(b,n); double tx6=now()-t;
  t=now(); XXH64_hash_t hx=XXH64(b,n,0); double tx64=now()-t;
  unsigned char md[32];unsigned mdl; t=now(); EVP_Digest(b,n,md,&mdl,EVP_sha256(),NULL); double ts=now()-t;
  double mb=n/1e6;
  printf("%s vec=%d memcpy %.0f memcmp %.0f xxh3_128 %.0f xxh3_64 %.0f xxh64 %.0f sha256 %.0f MB/s (%llx %llx %llx)\n",
    argv[0], XXH_VECTOR, mb/tm, mb/tc, mb/tx, mb/tx6, mb/tx64, mb/ts,(unsigned long long)h.low64,(unsigned long long)h6,(unsigned long long)hx);
}
