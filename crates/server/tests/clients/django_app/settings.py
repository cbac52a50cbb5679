# A Django project that migrates and uses its models against Centum
# (crates/server/tests/drivers.rs). CENTUM_URL names the server.
import os
from urllib.parse import urlparse

url = urlparse(os.environ["CENTUM_URL"])
SECRET_KEY = "centum-tests"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "shop"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": url.hostname,
        "PORT": url.port,
        "NAME": url.path.lstrip("/") or "centum",
        "USER": url.username or "centum",
        "PASSWORD": url.password or "",
    }
}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
