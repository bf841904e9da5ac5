#include <stddef.h>

#include "rbtree.h"

void rb_init(struct rb_tree *t)
{
	t->root = t->min = NULL;
}

static bool is_red(const struct rb_node *n)
{
	return n && n->red;
}

static void rb_rotate(struct rb_tree *t, struct rb_node *x, bool left)
{
	struct rb_node *y = left ? x->right : x->left;
	struct rb_node *mid = left ? y->left : y->right;

	if (left)
		x->right = mid;
	else
		x->left = mid;
	if (mid)
		mid->parent = x;
	y->parent = x->parent;
	if (!x->parent)
		t->root = y;
	else if (x == x->parent->left)
		x->parent->left = y;
	else
		x->parent->right = y;
	if (left)
		y->left = x;
	else
		y->right = x;
	x->parent = y;
}

void rb_insert(struct rb_tree *t, struct rb_node *n, uint64_t key)
{
	struct rb_node *p = NULL, **link = &t->root;
	bool leftmost = true;

	while (*link) {
		p = *link;
		if (key < p->key) {
			link = &p->left;
		} else {
			link = &p->right;
			leftmost = false;
		}
	}
	n->key = key;
	n->left = n->right = NULL;
	n->parent = p;
	n->red = true;
	*link = n;
	if (leftmost)
		t->min = n;

	while (is_red(n->parent)) {
		struct rb_node *g = n->parent->parent;
		bool pleft = n->parent == g->left;
		struct rb_node *u = pleft ? g->right : g->left;

		if (is_red(u)) {
			n->parent->red = false;
			u->red = false;
			g->red = true;
			n = g;
			continue;
		}
		if (n == (pleft ? n->parent->right : n->parent->left)) {
			n = n->parent;
			rb_rotate(t, n, pleft);
		}
		n->parent->red = false;
		g->red = true;
		rb_rotate(t, g, !pleft);
	}
	t->root->red = false;
}

static struct rb_node *rb_first(struct rb_node *n)
{
	while (n && n->left)
		n = n->left;
	return n;
}

static struct rb_node *rb_next(struct rb_node *n)
{
	if (n->right)
		return rb_first(n->right);
	while (n->parent && n == n->parent->right)
		n = n->parent;
	return n->parent;
}

static void rb_transplant(struct rb_tree *t, struct rb_node *u, struct rb_node *v)
{
	if (!u->parent)
		t->root = v;
	else if (u == u->parent->left)
		u->parent->left = v;
	else
		u->parent->right = v;
	if (v)
		v->parent = u->parent;
}

static void rb_delete_fixup(struct rb_tree *t, struct rb_node *x, struct rb_node *parent)
{
	while (x != t->root && !is_red(x)) {
		bool xleft = x == parent->left;
		struct rb_node *w = xleft ? parent->right : parent->left;

		if (is_red(w)) {
			w->red = false;
			parent->red = true;
			rb_rotate(t, parent, xleft);
			w = xleft ? parent->right : parent->left;
		}
		if (!is_red(w->left) && !is_red(w->right)) {
			w->red = true;
			x = parent;
			parent = x->parent;
			continue;
		}
		if (!is_red(xleft ? w->right : w->left)) {
			(xleft ? w->left : w->right)->red = false;
			w->red = true;
			rb_rotate(t, w, !xleft);
			w = xleft ? parent->right : parent->left;
		}
		w->red = parent->red;
		parent->red = false;
		(xleft ? w->right : w->left)->red = false;
		rb_rotate(t, parent, xleft);
		x = t->root;
		break;
	}
	if (x)
		x->red = false;
}

void rb_delete(struct rb_tree *t, struct rb_node *z)
{
	struct rb_node *x, *xparent, *y = z;
	bool y_red = y->red;

	if (t->min == z)
		t->min = rb_next(z);
	if (!z->left) {
		x = z->right;
		xparent = z->parent;
		rb_transplant(t, z, z->right);
	} else if (!z->right) {
		x = z->left;
		xparent = z->parent;
		rb_transplant(t, z, z->left);
	} else {
		y = rb_first(z->right);
		y_red = y->red;
		x = y->right;
		if (y->parent == z) {
			xparent = y;
		} else {
			xparent = y->parent;
			rb_transplant(t, y, y->right);
			y->right = z->right;
			y->right->parent = y;
		}
		rb_transplant(t, z, y);
		y->left = z->left;
		y->left->parent = y;
		y->red = z->red;
	}
	if (!y_red)
		rb_delete_fixup(t, x, xparent);
}

struct rb_node *rb_pop_min(struct rb_tree *t)
{
	struct rb_node *n = t->min;

	if (n)
		rb_delete(t, n);
	return n;
}
