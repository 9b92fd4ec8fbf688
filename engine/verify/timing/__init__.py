"""The checker's clocks and the trusted-timing core both harnesses share."""
