"""Upgrading from earlier releases: their recorded databases and the drill that migrates them."""
