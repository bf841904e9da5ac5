#include <stddef.h>

#include "rbtree.h"

enum { L, R };

static bool is_red(const struct rb_node *n)
{
	return n && n->red;
}

static int side(const struct rb_node *n)
{
	return n == n->parent->child[R];
}

/* v takes u's place under u's parent. */
static void rb_transplant(struct rb_tree *t, struct rb_node *u, struct rb_node *v)
{
	if (!u->parent)
		t->root = v;
	else
		u->parent->child[side(u)] = v;
	if (v)
		v->parent = u->parent;
}

/* x goes down to side d of its child on the other side. */
static void rb_rotate(struct rb_tree *t, struct rb_node *x, int d)
{
	struct rb_node *y = x->child[!d], *mid = y->child[d];

	x->child[!d] = mid;
	if (mid)
		mid->parent = x;
	rb_transplant(t, x, y);
	y->child[d] = x;
	x->parent = y;
}

void rb_insert(struct rb_tree *t, struct rb_node *n, uint64_t key)
{
	struct rb_node *p = NULL, **link = &t->root;
	bool leftmost = true;

	while (*link) {
		p = *link;
		leftmost = leftmost && key < p->key;
		link = &p->child[key >= p->key];
	}
	n->key = key;
	n->child[L] = n->child[R] = NULL;
	n->parent = p;
	n->red = true;
	*link = n;
	if (leftmost)
		t->min = n;

	while (is_red(n->parent)) {
		struct rb_node *g = n->parent->parent;
		int ps = side(n->parent);
		struct rb_node *u = g->child[!ps];

		if (is_red(u)) {
			n->parent->red = u->red = false;
			g->red = true;
			n = g;
			continue;
		}
		if (n == n->parent->child[!ps]) {
			n = n->parent;
			rb_rotate(t, n, ps);
		}
		n->parent->red = false;
		g->red = true;
		rb_rotate(t, g, !ps);
	}
	t->root->red = false;
}

static struct rb_node *rb_first(struct rb_node *n)
{
	while (n && n->child[L])
		n = n->child[L];
	return n;
}

static void rb_delete_fixup(struct rb_tree *t, struct rb_node *x, struct rb_node *parent)
{
	while (x != t->root && !is_red(x)) {
		int xs = x != parent->child[L];
		struct rb_node *w = parent->child[!xs];

		if (is_red(w)) {
			w->red = false;
			parent->red = true;
			rb_rotate(t, parent, xs);
			w = parent->child[!xs];
		}
		if (!is_red(w->child[L]) && !is_red(w->child[R])) {
			w->red = true;
			x = parent;
			parent = x->parent;
			continue;
		}
		if (!is_red(w->child[!xs])) {
			w->child[xs]->red = false;
			w->red = true;
			rb_rotate(t, w, !xs);
			w = parent->child[!xs];
		}
		w->red = parent->red;
		parent->red = false;
		w->child[!xs]->red = false;
		rb_rotate(t, parent, xs);
		x = t->root;
	}
	if (x)
		x->red = false;
}

void rb_delete(struct rb_tree *t, struct rb_node *z)
{
	struct rb_node *x, *xparent, *y = z;
	bool y_red = y->red;

	/* The minimum has no left child and is no right child. */
	if (t->min == z)
		t->min = z->child[R] ? rb_first(z->child[R]) : z->parent;
	if (!z->child[L] || !z->child[R]) {
		x = z->child[!z->child[L]];
		xparent = z->parent;
		rb_transplant(t, z, x);
	} else {
		y = rb_first(z->child[R]);
		y_red = y->red;
		x = y->child[R];
		if (y->parent == z) {
			xparent = y;
		} else {
			xparent = y->parent;
			rb_transplant(t, y, x);
			y->child[R] = z->child[R];
			y->child[R]->parent = y;
		}
		rb_transplant(t, z, y);
		y->child[L] = z->child[L];
		y->child[L]->parent = y;
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
