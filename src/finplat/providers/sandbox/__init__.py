"""What every sandbox provider shares: the simulator (latency, faults, callbacks), the faults
a partner arms, and the delivery of the callbacks the simulators queue."""
