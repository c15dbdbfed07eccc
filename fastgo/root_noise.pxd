# The root's exploration noise of the PUCT search (fastgo.mcts): Dirichlet noise on the root's
# priors, added once per search where the search wants noise.
from fastgo.rng cimport Rng
from fastgo.tree cimport Tree

# Dirichlet(alpha) noise mixed into the root's priors: P = (1 - weight) P + weight eta; alpha <= 0
# means 0.03 * 361 / number of root children. Returns 0 (nothing done) if the root is unexpanded.
cdef bint add_dirichlet_noise(Tree* t, Rng* rng, float alpha, float weight) noexcept nogil
