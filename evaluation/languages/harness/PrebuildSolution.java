class Solution {
    record Cell(int row, int column) {}

    interface Scorer { double score(String word); }

    static final class Node implements Comparable<Node> {
        final String word;
        final double weight;
        Node(String word, double weight) { this.word = word; this.weight = weight; }
        @Override public int compareTo(Node other) { return Double.compare(weight, other.weight); }
    }

    private final Map<String, Integer> memo = new HashMap<>();

    Map<String, Long[]> groupWords(long[][] grid, String[] words, Map<String, Double> weights, Long limit,
            List<Map<String, Long>> rows, boolean strict) {
        Map<String, Long[]> result = new TreeMap<>();
        long cap = limit == null ? Long.MAX_VALUE : limit;
        Scorer scorer = word -> weights.getOrDefault(word, 0.0) + word.length();
        PriorityQueue<Node> heap = new PriorityQueue<>(Comparator.reverseOrder());
        for (String word : words) heap.add(new Node(word, scorer.score(word)));
        Deque<Cell> queue = new ArrayDeque<>();
        Set<Cell> seen = new HashSet<>();
        if (grid.length > 0 && grid[0].length > 0) queue.add(new Cell(0, 0));
        int[][] moves = {{0, 1}, {1, 0}, {0, -1}, {-1, 0}};
        long total = 0;
        while (!queue.isEmpty()) {
            Cell cell = queue.poll();
            if (!seen.add(cell)) continue;
            total += grid[cell.row()][cell.column()];
            for (int[] move : moves) {
                int r = cell.row() + move[0], c = cell.column() + move[1];
                if (r >= 0 && r < grid.length && c >= 0 && c < grid[r].length) queue.add(new Cell(r, c));
            }
        }
        Map<Character, List<String>> byFirst = Arrays.stream(words)
                .filter(w -> !w.isEmpty())
                .sorted(Comparator.comparing(String::length).thenComparing(Function.identity()))
                .collect(Collectors.groupingBy(w -> w.charAt(0), TreeMap::new, Collectors.toList()));
        for (Map.Entry<Character, List<String>> entry : byFirst.entrySet()) {
            List<Long> values = new ArrayList<>();
            for (String word : entry.getValue()) {
                int kind = switch (word.length() % 3) {
                    case 0 -> countVowels(word);
                    case 1 -> memo.computeIfAbsent(word, this::countVowels);
                    default -> {
                        StringBuilder reversed = new StringBuilder(word).reverse();
                        yield reversed.toString().equals(word) ? 1 : 0;
                    }
                };
                values.add(kind > cap ? null : (long) kind);
            }
            result.put(String.valueOf(entry.getKey()), values.toArray(new Long[0]));
        }
        long sum = rows.stream().flatMap(row -> row.values().stream()).mapToLong(Long::longValue).sum();
        int[] counts = new int[26];
        for (char ch : String.join("", words).toCharArray()) {
            if (Character.isLetter(ch)) counts[Character.toLowerCase(ch) - 'a' & 31 % 26]++;
        }
        var best = heap.isEmpty() ? "" : heap.peek().word;
        try {
            if (strict && best.isEmpty()) throw new IllegalArgumentException("no words");
        } catch (IllegalArgumentException e) {
            return Collections.emptyMap();
        }
        String summary = String.format("%s:%d:%d:%.2f", best, total, sum, Math.sqrt(Math.abs(total)));
        result.putIfAbsent(summary.substring(0, Math.min(1, summary.length())), new Long[] {total + sum});
        return result;
    }

    int countVowels(String word) {
        int count = 0;
        for (int i = 0; i < word.length(); i++) {
            if ("aeiou".indexOf(word.charAt(i)) >= 0) count++;
        }
        return count;
    }

    static <T extends Comparable<T>> T largest(List<T> items) {
        T best = null;
        for (T item : items) if (best == null || item.compareTo(best) > 0) best = item;
        return best;
    }
}
