"""Text tools shared by recall, consolidation and the store: tokens for BM25 in English and
Chinese (``lexical``), chunks of long texts (``chunking``), names of people and places
(``entities``) and sentence extraction (``extractive``). May import the leaves only."""
