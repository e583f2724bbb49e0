"""Toolkits: ready-made tools for common agent jobs.

The research toolkit searches and reads a document corpus (a folder of Markdown, text, reST and
HTML files, or the Python language reference that ships with CPython) through BM25:

```python
from agents import Executor
from agents.toolkits import Corpus, research_tools

corpus = Corpus.from_folder("docs/")  # or Corpus.python_docs()
executor = Executor(model=model, tools=research_tools(corpus))
```
"""

from agents.toolkits._corpus import Corpus, Document, Hit
from agents.toolkits._docs import research_tools

__all__ = ["Corpus", "Document", "Hit", "research_tools"]
