"""Rows that stay where they are: partition plans over data files and SVRG OL's batch phase, in
process or on a Dask cluster.
"""
