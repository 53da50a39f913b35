"""Layer L1: clock (the injected `Clock`, `FakeClock`, Kubernetes time formats and durations), net
(loopback and certificate-name checks),
stdlib only; everything above may import it, it imports nothing of minik3s.

Data flow: components take a `Clock` (the real one by default) for every delay, deadline and
timestamp; tests hand them a `FakeClock` and advance it instead of sleeping.
"""
