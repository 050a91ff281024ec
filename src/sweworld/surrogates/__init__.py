"""surrogates"""
