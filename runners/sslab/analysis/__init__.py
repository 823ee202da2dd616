"""Analysis: reading archives into tables and plots.  Nothing here needs a substrate.

    stats          describe(): n, median, mean, 95% CI of the mean
    pcap           a flow's view at the bottleneck from a capture
    traces         per-ACK series (cwnd, in flight, delivered) from kernel traces
    plots          plots of one run's flows
    startup        the report of a scenario run (E1 and any scenario)
    archive        reading a matrix directory (plans, finished cells, their runs)
    table1         E7 (SUSS Table 1) beside the paper's values
    fairness       E6 (SUSS Fig. 15): Jain's index over time, recovery time
    matrix_report  a matrix's report, into a new reports/<stamp>/
    link           a varying link against its model: rate vs trace, bursts, queue
    lastmile       what E2 (Wi-Fi) and E4/E5 compute: FCT, loss against size over last hops
    runs_report    a report over runs as its experiment file describes it (E2, E4/E5)
    astart, blitzstart   E8 and E9 beside the papers
    reports        the reports by name, as experiment files name them (or describe: runs_report)

May import: scenario (units and names) and the leaves (paths, ccas).  Not
substrate, experiment, matrix or cli: reports are a function of the archive.
"""
