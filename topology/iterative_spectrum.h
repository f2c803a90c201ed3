// The spectra of mixing matrices too large for a dense eigensolve (spectral.h): the few
// eigenvalues of largest modulus, by Lanczos (a symmetric or reversible W) or Arnoldi (any
// other, and the product of a schedule's rounds), through Spectra on the sparse matrix.
// The eigenvalue 1 of a stochastic W is projected out before iterating, so the solver looks
// for lambda directly; a W whose remaining part is zero (exact averaging) gives lambda 0.
#pragma once

#include <vector>

#include "topology/mixing.h"
#include "topology/spectral.h"

namespace fastk::topology {

// Unsorted; spectrum() sorts. Throws std::runtime_error when the solver does not converge.
Spectrum iterative_spectrum(const MixingMatrix& w);
Spectrum iterative_product_spectrum(const std::vector<MixingMatrix>& rounds);

// Sorts by modulus and sets lambda and real (spectral.cc).
void sort_by_modulus(Spectrum& s);

}  // namespace fastk::topology
