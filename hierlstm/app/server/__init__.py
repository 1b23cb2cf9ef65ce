"""The server's life, apart from a session's and from the pages: the warm-up that imports
TensorFlow and runs each page's warm-up steps when the server starts (`warmup`), the gate that
keeps its steps and the pages' script runs apart (`gate`), and what a page shows while it waits
(`waiting`). The pages are known only through their records (`hierlstm.app.pages.PAGES`)."""
