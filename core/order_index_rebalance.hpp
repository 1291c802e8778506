// weir::core::order_index — the counted B+tree's structural changes (see order_index.hpp): a
// full leaf or inner node split and linked into its parent (splitting upwards), an underfull
// node merged into a sibling or dropped after an erase, the root replaced when it has one
// child. Included by order_index.hpp only, after the class.
#pragma once

#include "core/order_index.hpp"

namespace weir::core {

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::split_leaf(leaf* l) -> leaf* {
  auto* r = new leaf;
  ++leaves_;
  int half = l->n / 2;
  for (int k = half; k < l->n; ++k) {
    r->items[k - half] = std::move(l->items[k]);
    l->items[k] = entry{};
  }
  r->n = l->n - half;
  l->n = half;
  r->next = l->next;
  r->prev = l;
  if (l->next) {
    l->next->prev = r;
  } else {
    last_ = r;
  }
  l->next = r;
  insert_child_after(l, r, position_of_entry(r->items[0]));
  return r;
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::insert_child_after(node* left, node* right,
                                                                       sort_position sep) -> void {
  inner* p = left->parent;
  if (!p) {
    p = new inner;
    ++inners_;
    p->is_leaf = false;
    p->child[0] = left;
    p->count[0] = subtree_count(left);
    p->n = 1;
    left->parent = p;
    root_ = p;
  }
  int c = child_index(p, left);
  p->count[c] = subtree_count(left);
  if (p->n == inner_capacity) {
    // Split the parent first, then insert into the half that holds `left`.
    inner* pr = split_inner(p);
    if (left->parent == pr) {
      p = pr;
    }
    c = child_index(p, left);
  }
  for (int k = p->n; k > c + 1; --k) {
    p->child[k] = p->child[k - 1];
    p->count[k] = p->count[k - 1];
    p->sep[k] = std::move(p->sep[k - 1]);
  }
  p->child[c + 1] = right;
  p->count[c + 1] = subtree_count(right);
  p->sep[c + 1] = std::move(sep);
  right->parent = p;
  ++p->n;
  // A split above may have counted the halves before `right` joined one of them: recount
  // the path from here to the root (totals elsewhere are unchanged).
  for (node* x = p; x->parent; x = x->parent) {
    x->parent->count[child_index(x->parent, x)] = subtree_count(x);
  }
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::split_inner(inner* p) -> inner* {
  auto* r = new inner;
  ++inners_;
  r->is_leaf = false;
  int half = p->n / 2;
  sort_position up = std::move(p->sep[half]);
  for (int k = half; k < p->n; ++k) {
    r->child[k - half] = p->child[k];
    r->count[k - half] = p->count[k];
    r->sep[k - half] = std::move(p->sep[k]);
    r->child[k - half]->parent = r;
    p->child[k] = nullptr;
    p->count[k] = 0;
  }
  r->sep[0] = sort_position{};
  r->n = p->n - half;
  p->n = half;
  insert_child_after(p, r, std::move(up));
  return r;
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::rebalance_leaf(leaf* l) -> void {
  if (l == root_) {
    if (l->n == 0) {
      delete l;
      --leaves_;
      root_ = first_ = last_ = nullptr;
    }
    return;
  }
  if (l->n >= leaf_capacity / 4) {
    return;
  }
  inner* p = l->parent;
  int c = child_index(p, l);
  // Merge into the left sibling when both fit, else take the right sibling in.
  if (c > 0) {
    auto* left = static_cast<leaf*>(p->child[c - 1]);
    if (left->n + l->n <= leaf_capacity) {
      merge_leaves(left, l);
      return;
    }
  }
  if (c + 1 < p->n) {
    auto* right = static_cast<leaf*>(p->child[c + 1]);
    if (l->n + right->n <= leaf_capacity) {
      merge_leaves(l, right);
      return;
    }
  }
  if (l->n == 0) {
    unlink_leaf(l);
    remove_child(p, c);
  }
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::merge_leaves(leaf* left, leaf* right) -> void {
  for (int k = 0; k < right->n; ++k) {
    left->items[left->n++] = std::move(right->items[k]);
  }
  inner* p = left->parent;
  int c = child_index(p, left);
  p->count[c] = static_cast<std::size_t>(left->n);
  unlink_leaf(right);
  remove_child(p, c + 1);
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::unlink_leaf(leaf* l) -> void {
  if (l->prev) {
    l->prev->next = l->next;
  } else {
    first_ = l->next;
  }
  if (l->next) {
    l->next->prev = l->prev;
  } else {
    last_ = l->prev;
  }
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::remove_child(inner* p, int c) -> void {
  node* gone = p->child[c];
  if (gone->is_leaf) {
    delete static_cast<leaf*>(gone);
    --leaves_;
  } else {
    delete static_cast<inner*>(gone);
    --inners_;
  }
  for (int k = c; k + 1 < p->n; ++k) {
    p->child[k] = p->child[k + 1];
    p->count[k] = p->count[k + 1];
    p->sep[k] = std::move(p->sep[k + 1]);
  }
  --p->n;
  p->child[p->n] = nullptr;
  p->count[p->n] = 0;
  p->sep[p->n] = sort_position{};
  if (c == 0 && p->n > 0) {
    p->sep[0] = sort_position{};
  }
  rebalance_inner(p);
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::rebalance_inner(inner* p) -> void {
  if (p != root_ && p->n == 0) {
    remove_child(p->parent, child_index(p->parent, p));
    return;
  }
  if (p == root_) {
    if (p->n == 1) {
      // A root with one child: the child becomes the root.
      root_ = p->child[0];
      root_->parent = nullptr;
      p->child[0] = nullptr;
      delete p;
      --inners_;
    } else if (p->n == 0) {
      delete p;
      --inners_;
      root_ = first_ = last_ = nullptr;
    }
    return;
  }
  if (p->n >= inner_capacity / 4) {
    return;
  }
  inner* g = p->parent;
  int c = child_index(g, p);
  if (c > 0) {
    auto* left = static_cast<inner*>(g->child[c - 1]);
    if (left->n + p->n <= inner_capacity) {
      merge_inners(left, p, g, c);
      return;
    }
  }
  if (c + 1 < g->n) {
    auto* right = static_cast<inner*>(g->child[c + 1]);
    if (p->n + right->n <= inner_capacity) {
      merge_inners(p, right, g, c + 1);
      return;
    }
  }
}

template <class Ptr, int LeafCapacity, int InnerCapacity>
auto order_index<Ptr, LeafCapacity, InnerCapacity>::merge_inners(inner* left, inner* right,
                                                                 inner* g, int rc) -> void {
  for (int k = 0; k < right->n; ++k) {
    int at = left->n++;
    left->child[at] = right->child[k];
    left->count[at] = right->count[k];
    left->sep[at] = k == 0 ? std::move(g->sep[rc]) : std::move(right->sep[k]);
    left->child[at]->parent = left;
    right->child[k] = nullptr;
  }
  right->n = 0;
  g->count[rc - 1] = subtree_count(left);
  remove_child(g, rc);
}

}  // namespace weir::core
