"""Analysis: reading archives into tables and plots.  Nothing here needs a substrate.

    stats          describe(): n, median, mean, 95% CI of the mean
    pcap           a flow's view at the bottleneck from a capture
    traces         per-ACK series (cwnd, in flight, delivered) from kernel traces
    plots          plots of one run's flows
    startup        the report of a scenario run (E1 and any scenario)
    archive        reading a matrix directory (plans, finished cells, their runs)
    matrix_report  a matrix's report (its paper's tables: sslab.papers), into a new reports/<stamp>/
    link           a varying link against its model: rate vs trace, bursts, queue
    lastmile       what E2 (Wi-Fi) and E4/E5 compute: FCT, loss against size over last hops
    runs_report    a report over runs as its experiment file describes it (E2, E4/E5, E8-E10)
    change_table   its change sections: one start against the others, the paper's values beside
    value_table    its values and means sections: ours per value of a key, the paper's beside
    sides_table    its sides section: each side of a pair (SUSS off, on) and their difference
    matrix_described  a matrix's report described in its experiment file (E6), and finding any by its plan
    plugins        what the papers register: reports, readings of runs, claims' extractors
    reports        the reports by name, as experiment files name them (or describe: runs_report)

The papers' own Python (Table 1's report, the claims' extractors, E6's, E8's and E9's readings of
their runs, E6's figure) is in sslab.papers, which registers it here by name.

May import: scenario (units and names) and the leaves (paths, ccas).  Not
substrate, experiment, matrix or cli: reports are a function of the archive.
"""
