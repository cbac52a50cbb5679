"""Migrates a small shop app (foreign keys, unique constraints, indexes,
unique_together, a many-to-many field) in Django's transactional
migrations, then uses the models: nested atomic blocks (savepoints), a
unique violation rolled back to its savepoint, bulk inserts, cascading
deletes, the auth app's users and permissions. Last it migrates the app
back to zero (Django finds constraints by the column arrays of its
catalog queries) and forward again.

Run by crates/server/tests/drivers.rs against Centum and against
PostgreSQL (each on a fresh database); the two transcripts this prints on
stdout must be equal. Besides the rows, the transcript holds what Django's
introspection finds of the migrated tables (columns, constraints and
indexes, sequences), as its migrations and `inspectdb` read them.

Usage: compare.py WORKDIR URL (WORKDIR: a scratch copy of this directory,
where makemigrations writes the app's migration)."""
import os
import sys

work, os.environ["CENTUM_URL"] = sys.argv[1], sys.argv[2]
sys.path.insert(0, work)
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"

import django
from django.core.management import call_command

django.setup()

from django.db import connection

last_sql = []


def remember(execute, sql, params, many, context):
    last_sql[:] = [sql, params]
    return execute(sql, params, many, context)


def report(kind, value, tb):
    if last_sql:
        print(f"the last statement sent: {last_sql[0]}\nits parameters: {last_sql[1]!r}", file=sys.stderr)
    sys.__excepthook__(kind, value, tb)


connection.execute_wrappers.append(remember)
sys.excepthook = report

call_command("makemigrations", "shop", verbosity=0)
call_command("migrate", verbosity=0)

from decimal import Decimal
from django.contrib.auth.models import Permission, User
from django.db import IntegrityError, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Count, F, Sum
from shop.models import Category, Product, Review, Tag


def out(*parts):
    print(*parts, flush=True)


def shop_tables():
    return sorted(t for t in connection.introspection.table_names() if t.startswith("shop_"))


def introspect():
    """What Django's introspection finds of the shop's tables."""
    with connection.cursor() as cur:
        for table in shop_tables():
            out(f"  {table} columns")
            for f in connection.introspection.get_table_description(cur, table):
                out("   ", tuple(f))
            constraints = connection.introspection.get_constraints(cur, table)
            for name in sorted(constraints):
                out(f"  {table} constraint {name}", sorted(constraints[name].items()))
            out(f"  {table} sequences", connection.introspection.get_sequences(cur, table))
            out(f"  {table} relations", sorted(connection.introspection.get_relations(cur, table).items()))
            out(f"  {table} primary key", connection.introspection.get_primary_key_column(cur, table))


def violation(e):
    """The SQLSTATE and constraint of a database error."""
    diag = e.__cause__.diag
    return e.__cause__.sqlstate, diag.table_name, diag.constraint_name


out("migrated", list(MigrationRecorder.Migration.objects.filter(app="shop").values_list("name", flat=True)))
out("tables", shop_tables())
introspect()

c = Category.objects.create(name="bikes")
red, fast = Tag.objects.create(label="red"), Tag.objects.create(label="fast")
p = Product.objects.create(sku="B-1", title="Roadster", price=Decimal("999.50"), category=c)
p.tags.add(red, fast)
Review.objects.bulk_create([Review(product=p, stars=s) for s in (3, 4, 5)])
out("created", c.pk, red.pk, fast.pk, p.pk, list(Review.objects.order_by("pk").values_list("pk", "stars")))
with transaction.atomic():
    Product.objects.create(sku="B-2", title="Gravel", price=Decimal("1200"), category=c)
    try:
        with transaction.atomic():
            Product.objects.create(sku="B-1", title="Duplicate", price=1, category=c)
        out("the duplicate sku was accepted")
    except IntegrityError as e:
        out("duplicate sku rolled back to its savepoint", violation(e))
    try:
        with transaction.atomic():
            Product.objects.create(sku="B-3", title="Gravel", price=1, category=c)
        out("the duplicate title in a category was accepted")
    except IntegrityError as e:
        out("duplicate title rolled back to its savepoint", violation(e))
    Review.objects.create(product=p, stars=1)
    with transaction.atomic():
        Tag.objects.create(label="kept")
        with transaction.atomic():
            Tag.objects.create(label="nested")
    try:
        with transaction.atomic():
            Tag.objects.create(label="dropped")
            raise RuntimeError("changed our mind")
    except RuntimeError:
        pass
out("tags", list(Tag.objects.order_by("pk").values_list("label", flat=True)))
out("products", list(Product.objects.order_by("sku").values_list("sku", "title", "price", "category__name")))
out("reviews of B-1", Review.objects.filter(product__sku="B-1").count())
out("B-1 tags", sorted(p.tags.values_list("label", flat=True)))
out("per product", list(
    Product.objects.annotate(n=Count("review"), stars=Sum("review__stars"))
    .order_by("sku").values_list("sku", "n", "stars")))
out("tagged red", list(Product.objects.filter(tags__label="red").values_list("sku", flat=True)))
Product.objects.filter(sku="B-2").update(price=F("price") - Decimal("200.25"))
out("B-2 price", Product.objects.get(sku="B-2").price)
try:
    with transaction.atomic():
        Review.objects.create(product=p, stars=2)
        Product.objects.filter(sku="B-1").update(price=0)
        raise RuntimeError("all of it")
except RuntimeError:
    pass
out("after a rolled back block", Review.objects.count(), Product.objects.get(sku="B-1").price)
out("add_product permission", Permission.objects.filter(codename="add_product").exists())
User.objects.create_user("ann", "ann@example.com", "secret")
out("ann's password checks", User.objects.get(username="ann").check_password("secret"))
c.delete()
out("after deleting the category", Product.objects.count(), Review.objects.count(),
    Product.tags.through.objects.count())
# Migrating again finds nothing to do.
call_command("migrate", verbosity=0)
# Back to zero: Django finds each constraint and index by its columns
# (arrays in its catalog queries) and drops them, then the tables.
call_command("migrate", "shop", "zero", verbosity=0)
with connection.cursor() as cur:
    cur.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'shop%%'")
    out("shop relations after migrate zero", cur.fetchone()[0])
out("tables", shop_tables())
call_command("migrate", verbosity=0)
out("tables", shop_tables())
introspect()
out("products", Product.objects.count())
out("django scenario: ok")
