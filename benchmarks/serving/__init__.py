"""The serving harnesses: the app's server under its visitors, in Chromium (a fresh server's first
page, a browser's floor, a soak of random walks) and without browsers (a classroom of Streamlit
sessions speaking its protocol), its profile while they visit, and Streamlit's cleanup after each
script run. Each harness with a `main(argv)` is run as `python -m benchmarks NAME`."""
