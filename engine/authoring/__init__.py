"""Writing challenges of one's own: scaffold (``challenge new``), soundness
(``challenge check``) and deploy (``deploy``)."""
