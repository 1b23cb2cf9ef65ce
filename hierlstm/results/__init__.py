"""Results: every measurement in one SQLite file whose columns come from the result record,
with its schema migrations, and CSV/JSON export and import. Imports neither TensorFlow nor
Streamlit."""
