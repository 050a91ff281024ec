"""sweworld: train and evaluate software-engineering agents on real or simulated execution."""

__version__ = "0.1.0"
