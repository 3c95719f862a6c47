// Workload: C++ new/delete and containers in a namespace and a template, so
// stacks show operator new and demangled names.
//   ns::Widget<int>::grow(): new int[100] (400 bytes, kept), then a
//   std::vector<long> grown by 1000 push_backs (freed at the end).
//   make_string(): a std::string of 100 chars (heap, freed).
#include <string>
#include <unistd.h>
#include <vector>

namespace ns {
template <typename T> struct Widget {
	T *kept = nullptr;
	__attribute__((noinline)) void grow()
	{
		kept = new T[100]; // SITE:widget_new
		std::vector<long> v;
		for (long i = 0; i < 1000; i++)
			v.push_back(i); // SITE:push_back
	}
};
} // namespace ns

__attribute__((noinline)) static std::string make_string()
{
	std::string s(100, 'x'); // SITE:make_string
	__asm__ volatile("" ::: "memory");
	return s;
}

int main()
{
	ns::Widget<int> w;
	w.grow();
	std::string s = make_string();
	return write(1, "cxx done\n", 9) == 9 && s.size() == 100 ? 0 : 1;
}
