"""Admin for records of what happened: staff read them; nobody adds, edits or deletes them."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record of what happened: staff read it, and nobody adds, edits or deletes it here."""

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
