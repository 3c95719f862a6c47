// Workload: the same function called from two lines of main, filling a
// std::map whose names run to thousands of characters once demangled, as
// real C++ does. Nothing is freed: at the end every block is a leak.
//   fill(int, char const*): 8 keys of 40+ chars (std::string on the heap),
//   each with a std::vector<long> grown by push_back, and the map's nodes.
//   main: fill(10000, "first...") (CALL:first), then fill(30000, "second...")
//   (CALL:second): the same stacks below fill, two call sites above it; the
//   vectors (8 of 2048 longs, 8 of 4096) hold most of what leaks.
#include <map>
#include <string>
#include <vector>

typedef std::map<std::string, std::vector<long> > Table;
static Table *table;

__attribute__((noinline)) void fill(int n, const char *key)
{
	for (int i = 0; i < n; i++)
		(*table)[std::string(key) + std::to_string(i % 8)].push_back(i); // SITE:fill
}

int main()
{
	table = new Table;
	fill(10000, "first-key-long-enough-to-be-on-the-heap-"); // CALL:first
	fill(30000, "second-key-long-enough-to-be-on-the-heap-"); // CALL:second
	return table->size() == 16 ? 0 : 1;
}
