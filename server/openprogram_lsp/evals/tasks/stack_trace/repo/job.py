from inventory import stock_report


def main():
    print(stock_report(["apple", "kiwi"]))


if __name__ == "__main__":
    main()
