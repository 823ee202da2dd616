"""The SUSS paper's claims' extractors, per experiment: E3's dynamics (e3), E4/E5's FCT and loss
against size (e4), E6's fairness (fairness), E7's Table 1 (table1)."""
