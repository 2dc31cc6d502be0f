"""logging.basicConfig to stderr, as training scripts set it up."""

import logging

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(pathname)s:%(lineno)d %(message)s")
log = logging.getLogger("train")
log.info("starting")
logging.warning("root warning")
log.debug("hidden")
print("handlers", logging.getLogger().handlers)
