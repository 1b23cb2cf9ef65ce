"""The Streamlit app's package, the only one that imports Streamlit: URL and session state, the
sidebar, the banner, runs (lock, estimate, confirmation), caches, display helpers and the plotly
figures. The pages in app_pages/ are thin scripts over these modules."""
