class Heap {
  constructor(before) {
    this.items = [];
    this.before = before; // before(a, b): a belongs nearer the top than b
  }

  get size() {
    return this.items.length;
  }

  peek() {
    return this.items[0];
  }

  push(value) {
    const items = this.items;
    items.push(value);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.before(items[child], items[parent])) break;
      [items[child], items[parent]] = [items[parent], items[child]];
      child = parent;
    }
  }

  pop() {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0) {
      items[0] = last;
      let parent = 0;
      for (;;) {
        const left = 2 * parent + 1;
        const right = left + 1;
        let best = parent;
        if (left < items.length && this.before(items[left], items[best])) best = left;
        if (right < items.length && this.before(items[right], items[best])) best = right;
        if (best === parent) break;
        [items[best], items[parent]] = [items[parent], items[best]];
        parent = best;
      }
    }
    return top;
  }
}

function runningMedians(values) {
  const lower = new Heap((a, b) => a > b); // the smaller half, largest on top
  const upper = new Heap((a, b) => a < b); // the larger half, smallest on top
  const medians = [];
  for (const value of values) {
    if (lower.size && value > lower.peek()) upper.push(value);
    else lower.push(value);
    // Keep lower.size === upper.size or upper.size + 1.
    if (lower.size > upper.size + 1) upper.push(lower.pop());
    else if (upper.size > lower.size) lower.push(upper.pop());
    medians.push(lower.size > upper.size ? lower.peek() : (lower.peek() + upper.peek()) / 2);
  }
  return medians;
}
