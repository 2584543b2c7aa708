class Solution {
    double[] runningMedians(long[] values) {
        PriorityQueue<Long> lower = new PriorityQueue<>(Comparator.reverseOrder());  // the smaller half
        PriorityQueue<Long> upper = new PriorityQueue<>();  // the larger half
        double[] medians = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            long value = values[i];
            if (!lower.isEmpty() && value > lower.peek()) {
                upper.add(value);
            } else {
                lower.add(value);
            }
            // Keep lower.size() == upper.size() or upper.size() + 1.
            if (lower.size() > upper.size() + 1) {
                upper.add(lower.poll());
            } else if (upper.size() > lower.size()) {
                lower.add(upper.poll());
            }
            if (lower.size() > upper.size()) {
                medians[i] = lower.peek();
            } else {
                long a = lower.peek(), b = upper.peek();
                long sum = a + b;
                boolean overflowed = ((a ^ sum) & (b ^ sum)) < 0;
                medians[i] = overflowed ? a / 2.0 + b / 2.0 : sum / 2.0;
            }
        }
        return medians;
    }
}
