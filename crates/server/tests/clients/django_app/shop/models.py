from django.db import models

class Category(models.Model):
    name = models.CharField(max_length=100, unique=True)

class Tag(models.Model):
    label = models.CharField(max_length=50)

class Product(models.Model):
    sku = models.CharField(max_length=32, unique=True)
    title = models.CharField(max_length=200, db_index=True)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="products")
    tags = models.ManyToManyField(Tag, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("category", "title")]
        indexes = [models.Index(fields=["price", "created"], name="product_price_idx")]

class Review(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE)
    stars = models.SmallIntegerField()
    body = models.TextField(blank=True, default="")
