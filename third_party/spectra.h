// Spectra (Debian's libspectra-dev, header-only, on Eigen): Lanczos and Arnoldi eigensolvers
// for the spectral facts of large sparse mixing matrices (topology/spectral.cc). Included
// through this wrapper for the reason third_party/eigen.h gives.
#pragma once

#include "third_party/eigen_sparse.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ <= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Spectra/GenEigsSolver.h>
#include <Spectra/SymEigsSolver.h>
#pragma GCC diagnostic pop
#else
#include <Spectra/GenEigsSolver.h>
#include <Spectra/SymEigsSolver.h>
#endif
