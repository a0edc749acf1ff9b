"""Operations: metrics, log context, graceful shutdown, and the admin status report.

Split across layers (.importlinter names each module's): `metrics` and `multiproc` are
foundations (1); `instrument` (3) only counts and binds log ids; `http`, `messages`, `shutdown`
and `status` are door middleware and reports (7). A new module here needs its layer there.
"""
