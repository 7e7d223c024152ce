//! Stable sorts through one compiled sort. The standard library's `sort_by` is compiled again
//! for every element type and closure it is called with (a few KiB of machine code each, 0.3 MB
//! of the binary in all); the short, cold lists ctxkeep sorts (findings, files, history, log
//! entries) go through [`sort_by`] instead: their positions are sorted by one shared instance,
//! comparing through a pointer, and the items are then moved into place.

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, stably, as `slice::sort_by` does.
pub fn sort_by<T>(items: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions(&mut order, &mut |a, b| cmp(&items[a], &items[b]));
    permute(items, &mut order);
}

/// Sorts `items` by the key `key` gives, stably, as `slice::sort_by_key` does.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` by their own order, stably, as `slice::sort` does.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Sorts `items` by the key `key` gives, computed once per item, as `slice::sort_by_cached_key`
/// does.
pub fn sort_by_cached_key<T, K: Ord>(items: &mut [T], key: impl FnMut(&T) -> K) {
    if items.len() < 2 {
        return;
    }
    let keys: Vec<K> = items.iter().map(key).collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions(&mut order, &mut |a, b| keys[a].cmp(&keys[b]));
    permute(items, &mut order);
}

#[inline(never)]
fn sort_positions(order: &mut [usize], cmp: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Puts the item at `order[i]` at `i`, for every `i`: each cycle of the permutation is walked
/// once, its positions marked done as they are filled.
fn permute<T>(items: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_sort_does_and_keeps_ties_in_order() {
        // Pairs sorted by their first value only: ties must keep their input order.
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 3, 5, 17, 64, 300] {
            let items: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (((seed >> 33) % 5) as u8, i)
                })
                .collect();
            let mut ours = items.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std_sorted = items.clone();
            std_sorted.sort_by_key(|p| p.0);
            assert_eq!(ours, std_sorted, "len {len}");
            let mut by_key = items.clone();
            sort_by_key(&mut by_key, |p| std::cmp::Reverse(p.0));
            std_sorted.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(by_key, std_sorted, "len {len}, by key");
        }
    }

    #[test]
    fn moves_owned_items_without_losing_one() {
        let mut names: Vec<String> = ["delta", "alpha", "charlie", "bravo", "alpha"]
            .into_iter()
            .map(String::from)
            .collect();
        sort_by(&mut names, |a, b| b.cmp(a));
        assert_eq!(names, ["delta", "charlie", "bravo", "alpha", "alpha"]);
        sort(&mut names);
        assert_eq!(names, ["alpha", "alpha", "bravo", "charlie", "delta"]);
        let mut calls = 0;
        sort_by_cached_key(&mut names, |n| {
            calls += 1;
            std::cmp::Reverse(n.len())
        });
        assert_eq!(names, ["charlie", "alpha", "alpha", "bravo", "delta"]);
        assert_eq!(calls, 5, "one key per item");
    }
}
