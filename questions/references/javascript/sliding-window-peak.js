function windowPeaks(loads, width) {
  // Indices whose loads decrease from front to back; the front is the window's peak.
  const candidates = [];
  let front = 0; // candidates[front..] is the live deque
  const peaks = [];
  loads.forEach((load, index) => {
    while (candidates.length > front && loads[candidates[candidates.length - 1]] <= load) candidates.pop();
    candidates.push(index);
    if (candidates[front] <= index - width) front++;
    if (index >= width - 1) peaks.push(loads[candidates[front]]);
  });
  return peaks;
}
