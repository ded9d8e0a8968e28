"""Tests of the transports, and the raw-wire helpers the CLI and example tests share."""
