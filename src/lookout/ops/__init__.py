"""Operations: metrics, log context, graceful shutdown, and the admin status report."""
