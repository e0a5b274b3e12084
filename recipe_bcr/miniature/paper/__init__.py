"""The second miniature of the paper: runs, findings, report and write-up."""
