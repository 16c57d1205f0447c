#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/dunmore/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["dunmore/charges-guide"] = (
    "Dunmore Charges Guide",
    "Dunmore Mobile DAC - Charges Guide - bill pay and SIM-only - effective 2 March 2026",
    """
# Dunmore Charges Guide
Charges outside your plan for bill pay and SIM-only customers.
Effective 2 March 2026. Prices are in euro (EUR) and include VAT at 23%.

1. ABOUT THIS GUIDE
Your plan covers calls and texts to Irish numbers and your data allowance.
This guide lists what you pay for everything else. Roaming charges are in
Roaming zones and charges in our Help Centre, and the prices of the plans
themselves are in Plans and prices.

2. CALLING AND TEXTING ABROAD FROM IRELAND
Calls and texts from Ireland to numbers abroad are not part of any plan,
except calls to UK numbers on Dunmore Plus and Dunmore Max, which come out
of your plan first. Calls are charged per minute, rounded up to the next
minute.

Band     Countries (examples)               Calls a minute    Texts
Band 1   UK and EU countries                EUR 0.35          EUR 0.15
Band 2   USA, Canada, Australia, India      EUR 0.55*         EUR 0.25
Band 3   Rest of the world                  EUR 1.50          EUR 0.35
Band 4   Satellite networks                 EUR 6.00          EUR 0.65
* Or add International Minutes for EUR 7 a month: 200 minutes to Band 1
  and Band 2 numbers. Minutes renew on your bill date and don't roll over.

International Minutes can be added or removed in the app at any time. It
never covers Band 3 or Band 4 numbers.

3. SPECIAL AND PREMIUM-RATE NUMBERS
Number type                            Charge
1800 Freephone and 116 helplines       Free
112 and 999                            Free
0818 numbers                           Included in your plan
1530, 1550, 1560, 1580 and 1590        Set by the service, up to EUR 2.40
                                       a minute
118 directory enquiries                EUR 1.95 a call plus EUR 0.99 a
                                       minute
Texts to 5-digit short codes           Set by the service, up to EUR 5
                                       a text

Premium-rate calls and texts count towards your spend cap, and they are
blocked if your cap is EUR 0. You can bar them completely for every line
on your ac-
count in the app, under Account > Spend cap.
<<PAGE>>
4. OTHER CHARGES
Item                                          Charge
Replacement SIM or eSIM                       Free
Connection charge (phone and store orders)    EUR 25.00
Paper bill                                    EUR 2.50 a month
Late payment fee                              EUR 10.00
Returned Direct Debit                         EUR 15.00
Reconnection after barring for non-payment    EUR 20.00
Copy of a bill older than 12 months           EUR 5.00
Changing your mobile number                   Free once a year, then
                                              EUR 15.00
Unlocking a phone sold by Dunmore             Free

5. PAYING YOUR BILL
Your bill is ready on the same day each month. Direct Debit is collected
14 days after your bill date; if you pay another way, payment is due
within 14 days of the bill date. If a bill is still unpaid 21 days after
it was due, we may bar outgoing calls and data until it is paid, and your
phone shows the message DN-350. After 60 days unpaid we may end your
agreement and pass the debt to a collection agency.

6. QUESTIONS ABOUT A CHARGE
Call Customer Care on 1747 from your Dunmore phone, or use chat in the
app. If you think a charge is wrong, tell us within 3 months of the bill
date and we will look into it. While we do, you don't need to pay the
part of the bill you are querying.
""",
)

DOCS["rentmate/resident-fee-schedule"] = (
    "Resident Fee Schedule 2026",
    "Rentmate, Inc. - Resident Fee Schedule - effective January 1, 2026",
    """
# Resident Fee Schedule 2026
Rentmate-managed communities. Effective January 1, 2026.
Amounts are in US dollars (USD). If your lease or local law sets a lower
amount, the lower amount applies.

1. APPLYING AND MOVING IN
Fee                                        Amount       When charged
Application fee                            USD 45       Per adult applicant
Administrative fee                         USD 200      Once, at lease signing
Holding deposit                            USD 250      Credited to deposit
Transfer to another apartment              USD 300      Once per transfer
Adding or removing a roommate              USD 150      Per lease change

2. RENT AND PAYMENTS
Late fee                   USD 50 on the 6th, then USD 10 a day,
                           up to USD 150 a month
Returned payment           USD 35
Debit card payment         USD 4.95 per payment
Credit card payment        2.95% of the payment
Cash payment at a store    USD 3.99 per payment
Month-to-month premium     USD 150 a month

3. SERVICES
Lockout, weekdays 8 a.m. to 5 p.m.         Free
Lockout, all other times                   USD 85
Replacement key                            USD 25
Replacement key fob                        USD 40
Replacement garage remote                  USD 35
Drain or disposal clog caused by resident  USD 65 per visit
Bulk items left by the dumpster            USD 75
<<PAGE>>
4. MOVE-OUT CHARGES
Charged only for cleaning needed after you move out or for damage beyond
normal wear and tear. Every deduction is shown on your itemized statement.

Item                              Studio or 1 bed   2 bed     3 bed
General cleaning                  USD 150           USD 200   USD 250
Carpet cleaning                   USD 120           USD 160   USD 200
Wall repair and paint, per wall   USD 75            USD 75    USD 75
Blind replacement, each           USD 30            USD 30    USD 30
Missing smoke detector            USD 45            USD 45    USD 45
Trash left behind, per bag        USD 20            USD 20    USD 20

5. ENDING YOUR LEASE
Lease-break fee            Two months' rent (Part 9 of your lease)
Reletting charge           85% of one month's rent
Keys returned late         Daily rent for each extra day

Questions about a charge? Message your leasing office in the app within
30 days of the charge, or call Resident Support at 1-888-555-0128. Charges
you dispute in time are put on hold until the review is finished, and no
late fee is added to them while the review is under way. Resident Sup-
port can also explain a charge on your ledger.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "dunmore make_pdfs.py")


if __name__ == "__main__":
    main()
