"""Migrates a small shop app (foreign keys, unique constraints, indexes,
unique_together, a many-to-many field) in Django's transactional
migrations, then uses the models: nested atomic blocks (savepoints), a
unique violation rolled back to its savepoint, bulk inserts, cascading
deletes, the auth app's users and permissions. Last it migrates the app
back to zero (Django finds constraints by the column arrays of its
catalog queries) and forward again.

Usage: run.py WORKDIR CENTUM_URL (WORKDIR: a scratch copy of this
directory, where makemigrations writes the app's migration)."""
import os
import sys

work, os.environ["CENTUM_URL"] = sys.argv[1], sys.argv[2]
sys.path.insert(0, work)
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"

import django
from django.core.management import call_command

django.setup()
call_command("makemigrations", "shop", verbosity=0)
call_command("migrate", verbosity=0)

from decimal import Decimal
from django.contrib.auth.models import Permission, User
from django.db import IntegrityError, transaction
from shop.models import Category, Product, Review, Tag

c = Category.objects.create(name="bikes")
red, fast = Tag.objects.create(label="red"), Tag.objects.create(label="fast")
p = Product.objects.create(sku="B-1", title="Roadster", price=Decimal("999.50"), category=c)
p.tags.add(red, fast)
Review.objects.bulk_create([Review(product=p, stars=s) for s in (3, 4, 5)])
with transaction.atomic():
    Product.objects.create(sku="B-2", title="Gravel", price=Decimal("1200"), category=c)
    try:
        with transaction.atomic():
            Product.objects.create(sku="B-1", title="Duplicate", price=1, category=c)
        raise AssertionError("the duplicate sku was accepted")
    except IntegrityError:
        pass
    Review.objects.create(product=p, stars=1)
assert Product.objects.count() == 2, Product.objects.count()
assert Review.objects.filter(product__sku="B-1").count() == 4
assert sorted(p.tags.values_list("label", flat=True)) == ["fast", "red"]
assert Product.objects.get(sku="B-1").price == Decimal("999.50")
assert Permission.objects.filter(codename="add_product").exists()
User.objects.create_user("ann", "ann@example.com", "secret")
assert User.objects.get(username="ann").check_password("secret")
c.delete()
assert Product.objects.count() == 0 and Review.objects.count() == 0
# Migrating again finds nothing to do.
call_command("migrate", verbosity=0)
# Back to zero: Django finds each constraint and index by its columns
# (arrays in its catalog queries) and drops them, then the tables.
call_command("migrate", "shop", "zero", verbosity=0)
from django.db import connection
with connection.cursor() as cur:
    cur.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'shop%%'")
    assert cur.fetchone()[0] == 0, "shop relations left after migrate zero"
call_command("migrate", verbosity=0)
assert Product.objects.count() == 0
print("django scenario: ok")
